from proxy_postrender.cli import main

main()
