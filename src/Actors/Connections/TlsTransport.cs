using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using Courier.Actors.Server;

namespace Courier.Actors.Connections;

/// <summary>
/// The server side of TLS for any listener: built once from a <see cref="TlsOptions"/>, it turns an
/// accepted stream into an authenticated <see cref="SslStream"/>. The certificate context (key, chain)
/// and the client-certificate policy are prepared here once and shared by every handshake.
/// </summary>
/// <remarks>
/// The handshake is asynchronous I/O on the thread pool: it never runs on an actor's thread or on another
/// client's read pump, and a slow or silent peer costs only its own timer. After it, reads and writes go
/// through the <see cref="SslStream"/> unchanged, so a write pump's batch is still one write (one
/// encryption of up to 16 KB records) per buffer chunk.
/// </remarks>
public sealed class TlsTransport
{
    private readonly SslStreamCertificateContext _certificate;
    private readonly CipherSuitesPolicy? _cipherSuites;
    private readonly X509ChainPolicy? _clientChainPolicy;
    private readonly SslServerAuthenticationOptions _authentication;

    public TlsTransport(TlsOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        Options = options;
        _certificate = SslStreamCertificateContext.Create(options.Certificate, options.Chain, offline: true);
        _cipherSuites = CipherSuites(options);
        _clientChainPolicy = options.ClientCas is { } cas ? ClientChainPolicy(cas) : null;
        _authentication = CreateAuthenticationOptions();
    }

    /// <summary>The block this transport was built from.</summary>
    public TlsOptions Options { get; }

    /// <summary>
    /// Runs the server handshake on <paramref name="inner"/> within the configured timeout. On failure the
    /// <see cref="SslStream"/> (and with it <paramref name="inner"/>) is disposed and the exception says why.
    /// </summary>
    /// <exception cref="AuthenticationException">The handshake failed: not TLS, no or an untrusted client certificate.</exception>
    /// <exception cref="TimeoutException">The handshake did not finish within the timeout.</exception>
    public async Task<SslStream> AuthenticateAsync(Stream inner)
    {
        using var timeout = new CancellationTokenSource(Options.Timeout);
        return await AuthenticateAsync(inner, timeout.Token).ConfigureAwait(false);
    }

    /// <summary>
    /// Runs the server handshake on <paramref name="inner"/> until <paramref name="deadline"/> (a listener
    /// whose own limit covers the handshake, as the WebSocket listener's <c>handshake_timeout</c>).
    /// </summary>
    /// <exception cref="AuthenticationException">The handshake failed.</exception>
    /// <exception cref="TimeoutException">The deadline passed first.</exception>
    public async Task<SslStream> AuthenticateAsync(Stream inner, CancellationToken deadline)
    {
        var ssl = new SslStream(inner, leaveInnerStreamOpen: false);
        return await CompleteAsync(ssl, ssl.AuthenticateAsServerAsync(_authentication, deadline), deadline).ConfigureAwait(false);
    }

    /// <summary>
    /// The client side of the handshake, for a route this node dialled (nats-server's doTLSHandshake with
    /// solicit): this node's certificate as the client certificate, and the peer's server certificate
    /// checked against <c>ca_file</c> (the system's roots without one) and <paramref name="host"/>, the
    /// route URL's host (an IP address checks the certificate's IP SANs, as Go's crypto/tls).
    /// </summary>
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
            EnabledSslProtocols = _authentication.EnabledSslProtocols,
            CertificateRevocationCheckMode = X509RevocationMode.NoCheck,
            AllowRenegotiation = false,
            CipherSuitesPolicy = _cipherSuites,
            CertificateChainPolicy = _clientChainPolicy,
            RemoteCertificateValidationCallback = ValidateServerCertificate,
        };
        return await CompleteAsync(ssl, ssl.AuthenticateAsClientAsync(options, deadline.Token), deadline.Token).ConfigureAwait(false);
    }

    /// <summary>Waits for a handshake on <paramref name="ssl"/>; on failure disposes it (and the stream under it) and rethrows, a passed deadline as a timeout.</summary>
    internal static async Task<SslStream> CompleteAsync(SslStream ssl, Task handshake, CancellationToken deadline)
    {
        try
        {
            await handshake.ConfigureAwait(false);
            return ssl;
        }
        catch (OperationCanceledException) when (deadline.IsCancellationRequested)
        {
            await ssl.DisposeAsync().ConfigureAwait(false);
            throw new TimeoutException("TLS handshake timeout");
        }
        catch
        {
            await ssl.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    internal static bool ValidateServerCertificate(object sender, X509Certificate? certificate, X509Chain? chain, SslPolicyErrors errors)
    {
        if (certificate is null || errors.HasFlag(SslPolicyErrors.RemoteCertificateNotAvailable))
        {
            throw new AuthenticationException("server didn't provide a certificate");
        }

        if (errors.HasFlag(SslPolicyErrors.RemoteCertificateNameMismatch))
        {
            throw new AuthenticationException($"x509: certificate is not valid for {((SslStream)sender).TargetHostName}");
        }

        if (errors == SslPolicyErrors.None)
        {
            return true;
        }

        throw new AuthenticationException($"failed to verify certificate: {Describe(chain)}");
    }

    /// <summary>
    /// A fresh copy of the handshake settings (sharing the prepared certificate context), for a listener
    /// that runs the handshake itself, such as Kestrel for HTTPS monitoring.
    /// </summary>
    public SslServerAuthenticationOptions CreateAuthenticationOptions() => new()
    {
        ServerCertificateContext = _certificate,
        ClientCertificateRequired = Options.Verify,
        EnabledSslProtocols = Options.MinVersion == SslProtocols.Tls13 ? SslProtocols.Tls13 : SslProtocols.Tls12 | SslProtocols.Tls13,
        CertificateRevocationCheckMode = X509RevocationMode.NoCheck,
        AllowRenegotiation = false,
        CipherSuitesPolicy = _cipherSuites,
        CertificateChainPolicy = _clientChainPolicy,
        RemoteCertificateValidationCallback = ValidateClientCertificate,
    };

    private bool ValidateClientCertificate(object sender, X509Certificate? certificate, X509Chain? chain, SslPolicyErrors errors)
    {
        if (!Options.Verify)
        {
            return true; // no certificate is asked for; one sent anyway is not judged (Go's NoClientCert)
        }

        if (certificate is null || errors.HasFlag(SslPolicyErrors.RemoteCertificateNotAvailable))
        {
            throw new AuthenticationException("client didn't provide a certificate");
        }

        if (errors == SslPolicyErrors.None)
        {
            return true;
        }

        throw new AuthenticationException($"failed to verify certificate: {Describe(chain)}");
    }

    private static string Describe(X509Chain? chain)
    {
        if (chain is null)
        {
            return "certificate signed by unknown authority";
        }

        foreach (var status in chain.ChainStatus)
        {
            if (status.Status.HasFlag(X509ChainStatusFlags.NotTimeValid))
            {
                return "certificate has expired or is not yet valid";
            }
        }

        return chain.ChainStatus.Length > 0 ? $"certificate signed by unknown authority ({chain.ChainStatus[0].StatusInformation.Trim()})" : "certificate signed by unknown authority";
    }

    /// <summary>
    /// nats-server's defaults (server/ciphersuites.go defaultCipherSuites, and Go's TLS 1.3 order with
    /// AES hardware): AES-128-GCM first. OpenSSL's own order puts AES-256 first, which costs a third more
    /// per encrypted byte on both ends for no practical gain.
    /// </summary>
    private static readonly TlsCipherSuite[] DefaultCipherSuites =
    [
        TlsCipherSuite.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        TlsCipherSuite.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        TlsCipherSuite.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
        TlsCipherSuite.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
        TlsCipherSuite.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        TlsCipherSuite.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
    ];

    // Windows (SChannel) takes no per-connection suite list; there the system's policy applies.
    private static CipherSuitesPolicy? CipherSuites(TlsOptions options) => CipherSuites(options.CipherSuites);

    /// <summary>The suites of a <c>cipher_suites</c> list (nats-server's defaults when null), TLS 1.3's always on.</summary>
    internal static CipherSuitesPolicy? CipherSuites(IReadOnlyList<TlsCipherSuite>? suites) =>
        OperatingSystem.IsWindows() ? null : new CipherSuitesPolicy(WithTls13Suites(suites ?? DefaultCipherSuites));

    /// <summary>A chain policy trusting only <paramref name="cas"/> (a <c>ca_file</c>), revocation not checked.</summary>
    internal static X509ChainPolicy ClientChainPolicy(X509Certificate2Collection cas)
    {
        var policy = new X509ChainPolicy
        {
            TrustMode = X509ChainTrustMode.CustomRootTrust,
            RevocationMode = X509RevocationMode.NoCheck,
        };
        policy.CustomTrustStore.AddRange(cas);
        return policy;
    }

    // Go applies cipher_suites to TLS 1.2 only; TLS 1.3's three suites are always available, AES-128 first.
    private static IEnumerable<TlsCipherSuite> WithTls13Suites(IReadOnlyList<TlsCipherSuite> suites) =>
        new[] { TlsCipherSuite.TLS_AES_128_GCM_SHA256, TlsCipherSuite.TLS_AES_256_GCM_SHA384, TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256 }.Concat(suites).Distinct();
}
