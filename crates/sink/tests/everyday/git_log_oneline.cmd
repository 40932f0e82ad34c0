git log --oneline
