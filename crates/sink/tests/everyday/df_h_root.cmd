df -h /
