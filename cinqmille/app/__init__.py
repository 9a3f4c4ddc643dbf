"""The applications over the solved tables: the advice and its text, the export, the terminal game and its
players, the review of a game."""
