"""Reading the solved tables, above the solver: the policy table of any number of seats and its file (`policy`,
`load`, `groups`), where a position is read (`position`, `locate`), the blocks of turn rows and what a policy's
turn banks (`rows`, `turn_eval`, `turn_dist`, `objectives`). The solver below knows rules and dice only."""
