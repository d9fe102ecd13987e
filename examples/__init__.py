"""Small, complete examples of extending discogym."""
