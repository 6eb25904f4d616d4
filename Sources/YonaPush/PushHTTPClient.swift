import AsyncHTTPClient
import NIOSSL

/// The HTTP client of a push provider. The shared client keeps at most 8 HTTP/1.1 connections per host, which capped
/// the drain far below `concurrency` requests in flight; this one allows that many. Over TLS it negotiates HTTP/2
/// by ALPN (FCM and APNs speak it: one connection carries many streams; APNs speaks nothing else). Providers' answers
/// are small and not compressed, so there is no decompressor in the pipeline. `trustRootsPEM` adds roots to the
/// system's (a TLS-inspecting proxy's CA, or a local emulator's test CA). Redirects are never followed: no push
/// provider sends one, and a Web Push endpoint answering with one must not steer the server elsewhere (SSRF).
package enum PushHTTPClient {
    package static func make(concurrency: Int, trustRootsPEM: String?) throws -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let trustRootsPEM {
            tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMBytes(Array(trustRootsPEM.utf8)))]
        }
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls,
            connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(8, concurrency)),
            decompression: .disabled)
        configuration.httpVersion = .automatic
        configuration.redirectConfiguration = .disallow
        // No tracer: the server exports no traces, and AsyncHTTPClient's default (the global no-op tracer) still built
        // a span's attributes for every request, parsing the URL with Foundation (~3% of a push's CPU).
        configuration.tracing.tracer = nil
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }
}
