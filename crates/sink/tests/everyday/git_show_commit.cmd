git show --stat --patch d4bd337
