from scanner.cli import main

if __name__ == "__main__":  # pragma: no cover - exercised through `python -m scanner`
    main()
