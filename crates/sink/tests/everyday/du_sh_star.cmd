du -sh *
