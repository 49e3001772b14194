from pelctl.cli.main import main

main()
