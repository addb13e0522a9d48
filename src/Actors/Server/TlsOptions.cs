using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;

namespace Courier.Actors.Server;

/// <summary>
/// A listener's <c>tls { }</c> block, loaded: the server certificate with its key and chain, the CAs
/// client certificates are checked against, and the handshake settings. One instance per block; every
/// connection of the listener shares it (and the <see cref="Connections.TlsTransport"/> built from it).
/// </summary>
public sealed class TlsOptions
{
    /// <summary>nats-server's TLS_TIMEOUT: how long a client has to complete the handshake.</summary>
    public static readonly TimeSpan DefaultTimeout = TimeSpan.FromSeconds(2);

    /// <summary>The server certificate with its private key (<c>cert_file</c> + <c>key_file</c>).</summary>
    public required X509Certificate2 Certificate { get; init; }

    /// <summary>Intermediate certificates after the leaf in <c>cert_file</c>, sent with it.</summary>
    public X509Certificate2Collection Chain { get; init; } = [];

    /// <summary>
    /// <c>ca_file</c>: the trust bundle client certificates must chain to when <see cref="Verify"/> is on;
    /// null means the system's trust store.
    /// </summary>
    public X509Certificate2Collection? ClientCas { get; init; }

    /// <summary><c>verify</c>: a client certificate is required and validated.</summary>
    public bool Verify { get; init; }

    /// <summary><c>verify_and_map</c>: as <see cref="Verify"/>, and the certificate names the user (no password).</summary>
    public bool MapCertificateToUser { get; init; }

    /// <summary><c>timeout</c>: the handshake must finish within it; default 2 s as nats-server.</summary>
    public TimeSpan Timeout { get; init; } = DefaultTimeout;

    /// <summary><c>handshake_first</c>: the TLS handshake comes before INFO (nats-server 2.10).</summary>
    public bool HandshakeFirst { get; init; }

    /// <summary><c>cipher_suites</c> for TLS 1.2 (TLS 1.3's suites stay on, as in Go); null means nats-server's defaults.</summary>
    public IReadOnlyList<TlsCipherSuite>? CipherSuites { get; init; }

    /// <summary><c>min_version</c>: TLS 1.2 (the default, as nats-server) or TLS 1.3.</summary>
    public SslProtocols MinVersion { get; init; } = SslProtocols.Tls12;

    /// <summary>The files it came from, for logs.</summary>
    public string CertFile { get; init; } = "";
}
