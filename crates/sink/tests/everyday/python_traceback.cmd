python scripts/import_orders.py data/orders.csv
