using Courier.Testing;

namespace Courier.Load;

/// <summary>
/// The <c>tls</c> row's server configuration: a throw-away CA and server certificate (RSA 2048, as most
/// deployments), made once per run and removed at exit. Both servers read the same <c>tls { }</c> block.
/// </summary>
internal static class BenchTls
{
    private static readonly Lazy<TestCertificates> Certificates = new(() =>
    {
        var certificates = TestCertificates.Create();
        AppDomain.CurrentDomain.ProcessExit += (_, _) => certificates.Dispose();
        return certificates;
    });

    /// <summary>The <c>wss</c> row's: a WebSocket listener with the same certificate.</summary>
    public static string WebSocketConfig => $$"""
        websocket {
          host: 127.0.0.1
          port: -1
          tls {
            cert_file: "{{Certificates.Value.ServerCert}}"
            key_file: "{{Certificates.Value.ServerKey}}"
          }
        }
        """;

    public static string Config => $$"""
        tls {
          cert_file: "{{Certificates.Value.ServerCert}}"
          key_file: "{{Certificates.Value.ServerKey}}"
        }
        """;
}
