pip install -r requirements-dev.txt
