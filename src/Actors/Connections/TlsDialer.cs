using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using Courier.Actors.Server;

namespace Courier.Actors.Connections;

/// <summary>
/// The client side of TLS for a link this node dials with a <see cref="RemoteTlsOptions"/> (a leaf node
/// remote): the certificate context and the trust policy are prepared once per remote and shared by
/// every dial. The hub's certificate is checked against <c>ca_file</c> (the system's roots without one)
/// and the URL's host, as Go's crypto/tls client (nats-server's doTLSClientHandshake); <c>insecure</c>
/// skips both.
/// </summary>
/// <remarks>
/// As <see cref="TlsTransport"/>: the handshake is asynchronous I/O on the thread pool, bounded by the
/// block's timeout; afterwards the link's pumps read and write the <see cref="SslStream"/> unchanged.
/// </remarks>
public sealed class TlsDialer
{
    private readonly SslStreamCertificateContext? _certificate;
    private readonly CipherSuitesPolicy? _cipherSuites;
    private readonly X509ChainPolicy? _chainPolicy;

    public TlsDialer(RemoteTlsOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        Options = options;
        _certificate = options.Certificate is { } certificate ? SslStreamCertificateContext.Create(certificate, options.Chain, offline: true) : null;
        _cipherSuites = TlsTransport.CipherSuites(options.CipherSuites);
        _chainPolicy = options.Cas is { } cas ? TlsTransport.ClientChainPolicy(cas) : null;
    }

    /// <summary>The block this dialer was built from.</summary>
    public RemoteTlsOptions Options { get; }

    /// <summary>Runs the client handshake on <paramref name="inner"/> with <paramref name="host"/> (the URL's host) as the expected name.</summary>
    /// <exception cref="AuthenticationException">The handshake failed: not TLS, an untrusted or misnamed certificate.</exception>
    /// <exception cref="TimeoutException">The handshake did not finish within the timeout.</exception>
    public async Task<SslStream> AuthenticateAsClientAsync(Stream inner, string host)
    {
        using var deadline = new CancellationTokenSource(Options.Timeout);
        var ssl = new SslStream(inner, leaveInnerStreamOpen: false);
        var options = new SslClientAuthenticationOptions
        {
            TargetHost = host,
            ClientCertificateContext = _certificate,
            EnabledSslProtocols = Options.MinVersion == SslProtocols.Tls13 ? SslProtocols.Tls13 : SslProtocols.Tls12 | SslProtocols.Tls13,
            CertificateRevocationCheckMode = X509RevocationMode.NoCheck,
            AllowRenegotiation = false,
            CipherSuitesPolicy = _cipherSuites,
            CertificateChainPolicy = _chainPolicy,
            RemoteCertificateValidationCallback = Options.Insecure ? AcceptAny : TlsTransport.ValidateServerCertificate,
        };
        return await TlsTransport.CompleteAsync(ssl, ssl.AuthenticateAsClientAsync(options, deadline.Token), deadline.Token).ConfigureAwait(false);
    }

    // insecure: Go's InsecureSkipVerify, no chain or name check.
    private static bool AcceptAny(object sender, X509Certificate? certificate, X509Chain? chain, SslPolicyErrors errors) => true;
}
