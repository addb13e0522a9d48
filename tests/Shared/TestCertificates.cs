using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace Courier.Testing;

/// <summary>
/// A throw-away PKI made with .NET's <see cref="CertificateRequest"/> and written as PEM files to a temp
/// directory: a CA, server certificates for 127.0.0.1/localhost (RSA and EC keys), client certificates
/// signed by the CA (one expired), and one client certificate from an unrelated CA. Deleted on dispose.
/// </summary>
public sealed class TestCertificates : IDisposable
{
    /// <summary>The subject of the mapped client certificate, as nats-server prints it (RFC 2253, Go's order).</summary>
    public const string AliceSubject = "CN=alice,O=Courier Tests";

    /// <summary>The email SAN of bob's certificate.</summary>
    public const string BobEmail = "bob@courier.test";

    private static readonly Oid ServerAuth = new("1.3.6.1.5.5.7.3.1");
    private static readonly Oid ClientAuth = new("1.3.6.1.5.5.7.3.2");

    private TestCertificates(string directory) => Directory = directory;

    /// <summary>Where the PEM files are.</summary>
    public string Directory { get; }

    /// <summary>The CA certificate (PEM): the trust bundle for servers and clients.</summary>
    public string CaFile => File("ca.pem");

    /// <summary>Server certificate (RSA key, PKCS#8) for 127.0.0.1 and localhost.</summary>
    public string ServerCert => File("server-cert.pem");

    public string ServerKey => File("server-key.pem");

    /// <summary>Server certificate with an EC P-256 key (SEC1 <c>EC PRIVATE KEY</c>).</summary>
    public string ServerEcCert => File("server-ec-cert.pem");

    public string ServerEcKey => File("server-ec-key.pem");

    /// <summary>The server's RSA key again, as PKCS#1 <c>RSA PRIVATE KEY</c>.</summary>
    public string ServerRsaPkcs1Key => File("server-key-pkcs1.pem");

    /// <summary>
    /// A node's route certificate (EC P-256) for 127.0.0.1 and localhost, for both ends of a route: server
    /// and client authentication, as nats-server's routes use one certificate both ways.
    /// </summary>
    public string RouteCert => File("route-cert.pem");

    public string RouteKey => File("route-key.pem");

    /// <summary>Another CA (the one that signed <c>stranger</c>): a peer trusting only it trusts none of this set's servers.</summary>
    public string OtherCaFile => File("other-ca.pem");

    /// <summary>The file of <paramref name="name"/>'s client certificate (<c>alice</c>, <c>bob</c>, <c>mallory</c>, <c>expired</c>, <c>stranger</c>).</summary>
    public string ClientCert(string name) => File($"client-{name}-cert.pem");

    public string ClientKey(string name) => File($"client-{name}-key.pem");

    /// <summary>A client certificate with its key, for .NET clients.</summary>
    public X509Certificate2 LoadClient(string name) =>
        X509CertificateLoader.LoadPkcs12(X509Certificate2.CreateFromPemFile(ClientCert(name), ClientKey(name)).Export(X509ContentType.Pkcs12), null);

    public static TestCertificates Create()
    {
        var directory = System.IO.Directory.CreateTempSubdirectory("courier-tls-").FullName;
        var set = new TestCertificates(directory);
        var now = DateTimeOffset.UtcNow;

        using var caKey = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        using var ca = CreateCa("CN=Courier Test CA", caKey, now);
        set.Write("ca.pem", ca.ExportCertificatePem());

        using (var rsa = RSA.Create(2048))
        {
            var request = new CertificateRequest("CN=courier-server", rsa, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
            using var cert = Sign(request, ca, caKey, ServerNames(), ServerAuth, now.AddDays(-1), now.AddYears(1));
            set.Write("server-cert.pem", cert.ExportCertificatePem());
            set.Write("server-key.pem", rsa.ExportPkcs8PrivateKeyPem());
            set.Write("server-key-pkcs1.pem", rsa.ExportRSAPrivateKeyPem());
        }

        using (var ec = ECDsa.Create(ECCurve.NamedCurves.nistP256))
        {
            var request = new CertificateRequest("CN=courier-server-ec", ec, HashAlgorithmName.SHA256);
            using var cert = Sign(request, ca, caKey, ServerNames(), ServerAuth, now.AddDays(-1), now.AddYears(1));
            set.Write("server-ec-cert.pem", cert.ExportCertificatePem());
            set.Write("server-ec-key.pem", ec.ExportECPrivateKeyPem());
        }

        using (var ec = ECDsa.Create(ECCurve.NamedCurves.nistP256))
        {
            var request = new CertificateRequest("CN=courier-route", ec, HashAlgorithmName.SHA256);
            using var cert = Sign(request, ca, caKey, ServerNames(), [ServerAuth, ClientAuth], now.AddDays(-1), now.AddYears(1));
            set.Write("route-cert.pem", cert.ExportCertificatePem());
            set.Write("route-key.pem", ec.ExportPkcs8PrivateKeyPem());
        }

        set.WriteClient("alice", "CN=alice, O=Courier Tests", null, ca, caKey, now.AddDays(-1), now.AddYears(1));
        set.WriteClient("bob", "CN=bob", BobEmail, ca, caKey, now.AddDays(-1), now.AddYears(1));
        set.WriteClient("mallory", "CN=mallory, O=Elsewhere", null, ca, caKey, now.AddDays(-1), now.AddYears(1));
        set.WriteClient("expired", "CN=alice, O=Courier Tests", null, ca, caKey, now.AddDays(-30), now.AddDays(-1));

        using var otherKey = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        using var other = CreateCa("CN=Someone Else's CA", otherKey, now);
        set.Write("other-ca.pem", other.ExportCertificatePem());
        set.WriteClient("stranger", "CN=alice, O=Courier Tests", null, other, otherKey, now.AddDays(-1), now.AddYears(1));
        return set;
    }

    public void Dispose()
    {
        try
        {
            System.IO.Directory.Delete(Directory, recursive: true);
        }
        catch (IOException)
        {
            // A leftover temp folder is harmless.
        }
    }

    private static X509Certificate2 CreateCa(string subject, ECDsa key, DateTimeOffset now)
    {
        var request = new CertificateRequest(subject, key, HashAlgorithmName.SHA256);
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(true, false, 0, true));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.KeyCertSign | X509KeyUsageFlags.CrlSign, true));
        request.CertificateExtensions.Add(new X509SubjectKeyIdentifierExtension(request.PublicKey, false));
        return request.CreateSelfSigned(now.AddDays(-60), now.AddYears(2));
    }

    private static X509Extension ServerNames()
    {
        var names = new SubjectAlternativeNameBuilder();
        names.AddIpAddress(IPAddress.Loopback);
        names.AddDnsName("localhost");
        return names.Build();
    }

    private static X509Certificate2 Sign(CertificateRequest request, X509Certificate2 ca, ECDsa caKey, X509Extension? names, Oid usage, DateTimeOffset from, DateTimeOffset to) =>
        Sign(request, ca, caKey, names, [usage], from, to);

    private static X509Certificate2 Sign(CertificateRequest request, X509Certificate2 ca, ECDsa caKey, X509Extension? names, OidCollection usages, DateTimeOffset from, DateTimeOffset to)
    {
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(false, false, 0, false));
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension(usages, false));
        request.CertificateExtensions.Add(X509AuthorityKeyIdentifierExtension.CreateFromCertificate(ca, true, false));
        if (names is not null)
        {
            request.CertificateExtensions.Add(names);
        }

        return request.Create(ca.SubjectName, X509SignatureGenerator.CreateForECDsa(caKey), from, to, RandomNumberGenerator.GetBytes(16));
    }

    private void WriteClient(string name, string subject, string? email, X509Certificate2 ca, ECDsa caKey, DateTimeOffset from, DateTimeOffset to)
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest(subject, key, HashAlgorithmName.SHA256);
        X509Extension? names = null;
        if (email is not null)
        {
            var builder = new SubjectAlternativeNameBuilder();
            builder.AddEmailAddress(email);
            names = builder.Build();
        }

        using var cert = Sign(request, ca, caKey, names, ClientAuth, from, to);
        Write($"client-{name}-cert.pem", cert.ExportCertificatePem());
        Write($"client-{name}-key.pem", key.ExportPkcs8PrivateKeyPem());
    }

    private string File(string name) => Path.Combine(Directory, name);

    private void Write(string name, string pem) => System.IO.File.WriteAllText(File(name), pem + "\n");
}
