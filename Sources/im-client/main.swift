print("im-client")
