using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;

namespace Courier.Actors.Server;

/// <summary>
/// The client side of TLS for a link this node dials (a leaf node remote's <c>tls { }</c>, or a
/// <c>tls://</c> URL alone): the CAs the hub's certificate must chain to, and an optional client
/// certificate for a hub that verifies. As nats-server's remote TLS config (opts.go
/// parseRemoteLeafNodes: <c>RootCAs</c> from <c>ca_file</c>, the system's roots without one).
/// </summary>
public sealed class RemoteTlsOptions
{
    /// <summary>A <c>tls://</c> URL without a <c>tls { }</c> block: the system's roots, no client certificate.</summary>
    public static readonly RemoteTlsOptions Default = new();

    /// <summary><c>cert_file</c> + <c>key_file</c>: the certificate presented when the hub asks for one (<c>verify</c> there).</summary>
    public X509Certificate2? Certificate { get; init; }

    /// <summary>Intermediate certificates after the leaf in <c>cert_file</c>.</summary>
    public X509Certificate2Collection Chain { get; init; } = [];

    /// <summary><c>ca_file</c>: the trust bundle the hub's certificate must chain to; null means the system's trust store.</summary>
    public X509Certificate2Collection? Cas { get; init; }

    /// <summary><c>insecure</c>: the hub's certificate chain and name are not checked (nats-server logs a warning).</summary>
    public bool Insecure { get; init; }

    /// <summary><c>timeout</c>: the handshake must finish within it (nats-server's DEFAULT_LEAF_TLS_TIMEOUT, 2 s).</summary>
    public TimeSpan Timeout { get; init; } = TlsOptions.DefaultTimeout;

    /// <summary><c>cipher_suites</c> for TLS 1.2; null means nats-server's defaults.</summary>
    public IReadOnlyList<TlsCipherSuite>? CipherSuites { get; init; }

    /// <summary><c>min_version</c>: TLS 1.2 (the default) or TLS 1.3.</summary>
    public SslProtocols MinVersion { get; init; } = SslProtocols.Tls12;

    /// <summary>The certificate file, for the reload signature and logs.</summary>
    public string? CertFile { get; init; }

    /// <summary>The CA file, for the reload signature.</summary>
    public string? CaFile { get; init; }
}
