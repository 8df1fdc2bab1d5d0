"""`hyperpod-dpd plan` and `diff`: the program run offline and what it would deploy.

engine (the real program under the SDK's mock engine, recording every registration), fakes (the
providers' answers), planner (a stack read and judged once, the run, the files of a plan),
summary (the plan's text, JSON and summary.md), diff (two plans compared), diff_render (the
comparison as markdown, text, JSON), diff_sides (plan directories or git refs planned with
their own code), command (the two commands' runs)."""
