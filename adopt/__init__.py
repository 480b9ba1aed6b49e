"""`gpu-gitops adopt`: live drift the audit found -> a reviewed profile change on a branch.

findings -> plan of profile edits (plan.py, pure) -> round-trip YAML edits (yamledit.py) ->
validate and render in memory (check.py) -> one commit on a new branch with git plumbing, never
touching the checkout (branch.py) -> optionally a push and a pull request (pr.py).
"""
