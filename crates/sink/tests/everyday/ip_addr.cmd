ip addr
