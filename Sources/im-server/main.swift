print("im-server")
