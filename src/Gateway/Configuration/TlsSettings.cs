using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using Courier.Actors.Server;

namespace Courier.Gateway.Configuration;

/// <summary>
/// A <c>tls { }</c> block (or the <c>--tls*</c> flags) as written: file names and switches. <see cref="Load"/>
/// reads the PEM files and builds the <see cref="TlsOptions"/> a listener uses, failing with nats-server's
/// messages (server/opts.go GenTLSConfig).
/// </summary>
internal sealed record TlsSettings
{
    public string? CertFile { get; init; }

    public string? KeyFile { get; init; }

    public string? CaFile { get; init; }

    public bool Verify { get; init; }

    public bool VerifyAndMap { get; init; }

    public TimeSpan Timeout { get; init; } = TlsOptions.DefaultTimeout;

    public bool HandshakeFirst { get; init; }

    public IReadOnlyList<TlsCipherSuite>? CipherSuites { get; init; }

    public SslProtocols MinVersion { get; init; } = SslProtocols.Tls12;

    /// <summary><c>insecure</c> (a remote's block only): the peer's certificate is not checked.</summary>
    public bool Insecure { get; init; }

    /// <summary>Loads the certificate, key and trust bundle.</summary>
    /// <exception cref="InvalidDataException">A file is missing, unreadable or not what it should be; the message says which.</exception>
    public TlsOptions Load()
    {
        if (CertFile is null && KeyFile is null)
        {
            // nats-server would start and fail every handshake; a listener cannot serve TLS without a certificate.
            throw new InvalidDataException("missing 'cert_file' and 'key_file' in TLS configuration");
        }

        var (certificate, chain) = LoadCertificate()!.Value;
        return new TlsOptions
        {
            Certificate = certificate,
            Chain = chain,
            ClientCas = LoadCas(),
            Verify = Verify || VerifyAndMap,
            MapCertificateToUser = VerifyAndMap,
            Timeout = Timeout,
            HandshakeFirst = HandshakeFirst,
            CipherSuites = CipherSuites,
            MinVersion = MinVersion,
            CertFile = CertFile!,
        };
    }

    /// <summary>
    /// Loads a dialling side's block (a leaf node remote's <c>tls { }</c>): the certificate is optional
    /// (presented when the hub asks), <c>ca_file</c> checks the hub's certificate.
    /// </summary>
    /// <exception cref="InvalidDataException">A file is missing, unreadable or not what it should be.</exception>
    public RemoteTlsOptions LoadRemote()
    {
        var loaded = LoadCertificate();
        return new RemoteTlsOptions
        {
            Certificate = loaded?.Certificate,
            Chain = loaded?.Chain ?? [],
            Cas = LoadCas(),
            Insecure = Insecure,
            Timeout = Timeout,
            CipherSuites = CipherSuites,
            MinVersion = MinVersion,
            CertFile = CertFile,
            CaFile = CaFile,
        };
    }

    /// <summary>The certificate with its key and intermediates; null when the block names neither file.</summary>
    private (X509Certificate2 Certificate, X509Certificate2Collection Chain)? LoadCertificate()
    {
        switch (CertFile, KeyFile)
        {
            case (not null, null):
                throw new InvalidDataException("missing 'key_file' in TLS configuration");
            case (null, not null):
                throw new InvalidDataException("missing 'cert_file' in TLS configuration");
            case (null, null):
                return null;
        }

        if ((Missing(CertFile) ?? Missing(KeyFile)) is { } missingFile)
        {
            throw new InvalidDataException($"error parsing X509 certificate/key pair: {missingFile}");
        }

        try
        {
            // PEM certificate (the leaf first, then any intermediates) and a PKCS#1, PKCS#8 or SEC1 (EC) key.
            using var pemLoaded = X509Certificate2.CreateFromPemFile(CertFile, KeyFile);

            // An ephemeral key cannot be used by every TLS backend: re-import it as PKCS#12 once.
            var certificate = X509CertificateLoader.LoadPkcs12(pemLoaded.Export(X509ContentType.Pkcs12), null);
            var chain = new X509Certificate2Collection();
            chain.ImportFromPemFile(CertFile);
            chain.RemoveAt(0);
            return (certificate, chain);
        }
        catch (Exception e) when (e is CryptographicException or IOException or UnauthorizedAccessException or ArgumentException)
        {
            throw new InvalidDataException($"error parsing X509 certificate/key pair: {Describe(e)}", e);
        }
    }

    /// <summary><c>ca_file</c>'s certificates; null without one.</summary>
    private X509Certificate2Collection? LoadCas()
    {
        if (CaFile is null)
        {
            return null;
        }

        if (Missing(CaFile) is { } missing)
        {
            throw new InvalidDataException(missing);
        }

        X509Certificate2Collection cas = [];
        try
        {
            cas.ImportFromPemFile(CaFile);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new InvalidDataException(Describe(e), e);
        }
        catch (CryptographicException)
        {
            cas.Clear();
        }

        if (cas.Count == 0)
        {
            throw new InvalidDataException("failed to parse root ca certificate");
        }

        return cas;
    }

    /// <summary>Go's wording for a file that is not there: <c>open x: no such file or directory</c>.</summary>
    private static string? Missing(string path) => File.Exists(path) ? null : $"open {path}: no such file or directory";

    private static string Describe(Exception e) => e is UnauthorizedAccessException ? $"permission denied ({e.Message})" : e.Message;
}
