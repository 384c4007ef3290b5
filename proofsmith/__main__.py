from proofsmith.cli import main

raise SystemExit(main())
