import YonaServer

await Entrypoint.main()
