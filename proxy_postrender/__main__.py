from proxy_postrender.entry import main

main()
