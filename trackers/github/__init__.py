"""GitHub as a tracker: its REST API's rules written once (rest.py, sans-I/O) and sent by a sync and an async caller
(send.py); its issues and Discussions read as the harvest's threads (issues.py, discussions.py). The GitHub bot
(server/channels/github/) calls the API through the same core."""
