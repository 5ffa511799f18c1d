"""Repeated releases of one project (issue 30): the release ledger, what a release's records cost when released
again, and what combining two generalized releases reveals. Below the job and the release package, beside the
privacy primitives: nothing here imports a method, the job or the release package."""
