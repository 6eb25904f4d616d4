// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "yona-server",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "yona-server", targets: ["yona-server"])
    ],
    dependencies: [
        .package(url: "https://github.com/vapor/vapor.git", from: "4.110.0"),
        .package(url: "https://github.com/vapor/fluent.git", from: "4.12.0"),
        // Fluent's models and queries without Vapor: the modules below the API import FluentKit, so they compile
        // while Vapor does (docs/performance.md "From a fresh clone").
        .package(url: "https://github.com/vapor/fluent-kit.git", from: "1.49.0"),
        .package(url: "https://github.com/vapor/fluent-sqlite-driver.git", from: "4.8.0"),
        .package(url: "https://github.com/vapor/fluent-postgres-driver.git", from: "2.10.0"),
        // The error mapping tells a database that went away (503) from a bug (500) by PostgresNIO's error codes.
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.21.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.21.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.1.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.1.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.27.0"),
        // The listeners (HTTPFront): NIO's HTTP/1.1 pipeline and NIOExtras' graceful quiescing, as Vapor's server uses.
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.24.0"),
        // P-256 key agreement, HKDF and AES-GCM for Web Push (RFC 8291); the range jwt-kit accepts.
        .package(url: "https://github.com/apple/swift-crypto.git", "3.8.0"..<"5.0.0"),
        // The tests' APNs emulator speaks HTTP/2 frames itself (Apple answers 200 with HEADERS alone).
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.30.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        // No pkgConfig: gd.h needs only /usr/include, and gdlib.pc's cflags carry a define SwiftPM refuses with a warning.
        .systemLibrary(
            name: "CGD",
            providers: [.apt(["libgd-dev"])]
        ),
        .systemLibrary(
            name: "CLDAP",
            providers: [.apt(["libldap-dev"])]
        ),
        // libcurl speaks SMTP with STARTTLS and AUTH (docs/decisions.md "E-mail over SMTP through libcurl").
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(
            name: "CLibCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(
            name: "YonaCrypto",
            dependencies: ["CSodium", "CLibCrypto"]
        ),
        // The store: Fluent models, migrations and the database plumbing; nothing above it (no Vapor, no domain).
        .target(
            name: "YonaStore",
            dependencies: [
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "FluentSQLiteDriver", package: "fluent-sqlite-driver"),
                .product(name: "FluentPostgresDriver", package: "fluent-postgres-driver"),
            ],
            // Yona's production category set, seeded on a production server's first start.
            resources: [.embedInCode("Categories/production.json")]
        ),
        // Observability: the Prometheus registry each application exposes at `/metrics`, and the per-minute delivery
        // tallies behind the console's charts; the one module that names Prometheus below the executable.
        .target(
            name: "YonaObservability",
            dependencies: [
                "YonaStore",
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        // Delivery: how texts and mails leave the server (SMS providers, SMTP), one outcome type and one backoff rule.
        .target(
            name: "YonaDelivery",
            dependencies: [
                "CCurl",
                "CLDAP",
                "YonaStore",
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        // The domain: services, keys and rules in plain Swift over the store; no Vapor, no HTTP.
        .target(
            name: "YonaDomain",
            dependencies: [
                "YonaCrypto",
                "YonaStore",
                "YonaDelivery",
                "YonaObservability",
                "CGD",
                .product(name: "FluentKit", package: "fluent-kit"),
            ]
        ),
        // Push delivery: the outbox's drain and the providers (FCM, APNs, Web Push); no Vapor.
        .target(
            name: "YonaPush",
            dependencies: [
                "YonaCrypto",
                "YonaStore",
                "YonaDomain",
                "YonaObservability",
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The server's settings, read from the environment with one-line errors.
        .target(
            name: "YonaConfig",
            dependencies: [
                "YonaCrypto",
                "YonaDelivery",
                "YonaDomain",
                "YonaPush",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            // The VPN files' samples live in the binary, so a server started anywhere serves them (operations.md).
            resources: [
                .embedInCode("Samples/profile.ovpn"), .embedInCode("Samples/rootcert.cer"),
                .embedInCode("Samples/apple.mobileconfig.xml"),
            ]
        ),
        // The HTTP API: routes, strict decoding, HAL rendering, the error mapping, the listeners.
        .target(
            name: "YonaAPI",
            dependencies: [
                "YonaCrypto",
                "YonaStore",
                "YonaDelivery",
                "YonaObservability",
                "YonaDomain",
                "YonaPush",
                "YonaConfig",
                .product(name: "Vapor", package: "vapor"),
                .product(name: "Fluent", package: "fluent"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
            ]
        ),
        // The executable's commands and the wiring: configuration in, services and listeners out.
        .target(
            name: "YonaServer",
            dependencies: [
                "YonaStore",
                "YonaDelivery",
                "YonaObservability",
                "YonaDomain",
                "YonaPush",
                "YonaConfig",
                "YonaAPI",
                .product(name: "Vapor", package: "vapor"),
                .product(name: "Fluent", package: "fluent"),
                .product(name: "FluentSQLiteDriver", package: "fluent-sqlite-driver"),
                .product(name: "FluentPostgresDriver", package: "fluent-postgres-driver"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        .executableTarget(
            name: "yona-server",
            dependencies: ["YonaServer"]
        ),
        .testTarget(
            name: "YonaCryptoTests",
            dependencies: ["YonaCrypto"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "YonaServerTests",
            dependencies: [
                "YonaServer",
                "YonaStore",
                "YonaDelivery",
                "YonaObservability",
                "YonaDomain",
                "YonaPush",
                "YonaConfig",
                "YonaAPI",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
            ],
            resources: [.copy("Fixtures")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
