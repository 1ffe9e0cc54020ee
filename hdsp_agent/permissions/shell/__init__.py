"""Shell command analysis: a command is parsed with bashlex and every part it runs is judged."""
