"""The chat bots' wing (Slack, Feishu, DingTalk, and GitHub's replay memory): what the bots share and no other
channel uses. The one flow from a message to its last reply (`flow`), the replies before any platform's markup
(`replies`), those replies as Markdown (`markdown`), a vote's reply to the voter (`votes`), and what a bot keeps
between requests (`delivery_ids`: its `Guard`, kept on the app). Each bot's markup stays in its package."""
