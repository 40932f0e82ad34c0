env
