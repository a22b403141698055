"""Forgetting and what it rests on: a person's selection (`selection`), the plan they agree to and
what was removed (`results`), the act itself (`forgetting`), the trash forgotten files wait in
(`trash`), and scrub, which redacts the secrets today's rules find (`scrub`). Destructive, so
only ever an explicit act of the person's."""
