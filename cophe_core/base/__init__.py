"""What every layer uses: reading bytes and text, the input error and its reasons, the messages' wording."""
