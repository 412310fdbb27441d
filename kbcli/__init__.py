"""The `kb` command: the library (`kb`), the ingest (`ingest`) and the web app (`server`) wired together.

Dependencies run one way: `kbcli` imports `server`, `ingest` and `kb`; `server` and
`ingest` import `kb`; `kb` imports none of them. `kbcli.cli:main` is the `kb` console script.
"""
