ss -ltnp
