"""The setting a loop trains in: tracks as typed data (tracks), the lab every check shares (lab), the
parent's draws for the differential checks (draws), the recording optimizers and schedules (instruments)."""
