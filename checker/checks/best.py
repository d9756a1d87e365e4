"""Three-class track: reporting the best validation epoch and keeping the best weights."""
