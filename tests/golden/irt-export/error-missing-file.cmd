irt-export --jsonl missing.fb
