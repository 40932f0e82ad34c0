ls -R packages
