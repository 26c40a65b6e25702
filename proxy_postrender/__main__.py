from proxy_postrender.cli.entry import main

main()
