git diff --stat
