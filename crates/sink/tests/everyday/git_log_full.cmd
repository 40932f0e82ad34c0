git log -n 120
