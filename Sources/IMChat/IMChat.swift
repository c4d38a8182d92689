// IMChat
