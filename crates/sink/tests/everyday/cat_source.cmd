cat inventory/http_sync.py
