tree
