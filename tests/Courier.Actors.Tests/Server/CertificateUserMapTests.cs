using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using Courier.Actors.Server;
using Xunit;

namespace Courier.Actors.Tests.Server;

/// <summary><c>verify_and_map</c>: which configured user a client certificate names, in nats-server's order.</summary>
public sealed class CertificateUserMapTests
{
    private static X509Certificate2 Certificate(string subject, Action<SubjectAlternativeNameBuilder>? names = null)
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest(subject, key, HashAlgorithmName.SHA256);
        if (names is not null)
        {
            var builder = new SubjectAlternativeNameBuilder();
            names(builder);
            request.CertificateExtensions.Add(builder.Build());
        }

        return request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(1));
    }

    private static UserEntry User(string name) => new(name, null, null);

    [Fact]
    public void The_subject_is_printed_most_specific_first_as_go_does()
    {
        using var cert = Certificate("CN=alice, OU=Eng, O=Acme, C=US");

        Assert.Equal("CN=alice,OU=Eng,O=Acme,C=US", CertificateUserMap.Format(CertificateUserMap.SubjectAttributes(cert.SubjectName)));
    }

    [Fact]
    public void Special_characters_in_a_value_are_escaped_as_rfc_2253()
    {
        using var cert = Certificate("CN=\"Smith, John\", O=\"A+B\"");

        Assert.Equal("CN=Smith\\, John,O=A\\+B", CertificateUserMap.Format(CertificateUserMap.SubjectAttributes(cert.SubjectName)));
    }

    [Fact]
    public void An_email_san_wins_over_a_dns_san_and_the_subject()
    {
        using var cert = Certificate("CN=alice", n =>
        {
            n.AddDnsName("alice.example.com");
            n.AddEmailAddress("alice@example.com");
        });
        UserEntry[] users = [User("CN=alice"), User("alice.example.com"), User("alice@example.com")];

        Assert.Equal("alice@example.com", CertificateUserMap.Find(cert, users)?.User);
        Assert.Equal("alice.example.com", CertificateUserMap.Find(cert, users[..2])?.User);
        Assert.Equal("CN=alice", CertificateUserMap.Find(cert, users[..1])?.User);
    }

    [Fact]
    public void A_uri_san_maps_too()
    {
        using var cert = Certificate("CN=svc", n => n.AddUri(new Uri("spiffe://acme/svc")));

        Assert.Equal("spiffe://acme/svc", CertificateUserMap.Find(cert, [User("spiffe://acme/svc")])?.User);
    }

    [Theory]
    [InlineData("O=Acme, CN=alice")]
    [InlineData("cn=alice,o=Acme")]
    [InlineData("CN=alice , O=Acme")]
    public void A_user_written_as_the_same_dn_in_another_order_or_spacing_maps(string userName)
    {
        using var cert = Certificate("CN=alice, O=Acme");

        Assert.Equal(userName, CertificateUserMap.Find(cert, [User("CN=bob,O=Acme"), User(userName)])?.User);
    }

    [Fact]
    public void A_certificate_naming_no_configured_user_maps_to_nobody()
    {
        using var cert = Certificate("CN=mallory, O=Acme", n => n.AddEmailAddress("mallory@example.com"));

        Assert.Null(CertificateUserMap.Find(cert, [User("CN=alice,O=Acme"), User("CN=mallory"), User("alice@example.com")]));
    }
}
