using System.Buffers.Text;
using System.Security.Cryptography;
using System.Text;
using System.Text.Json.Nodes;
using NATS.NKeys;

namespace Courier.Integration.Tests.Identity;

/// <summary>
/// A small NATS JWT encoder, as <c>nsc</c> and the jwt library make them: the header
/// <c>{"typ":"JWT","alg":"ed25519-nkey"}</c>, the claims with <c>iss</c>, <c>iat</c> and a <c>jti</c>,
/// the issuer's Ed25519 signature over both, each part raw URL-safe base64.
/// </summary>
public static class TestJwt
{
    private static readonly string Header = Base64Url.EncodeToString("""{"typ":"JWT","alg":"ed25519-nkey"}"""u8);

    /// <summary>Now, in Unix seconds.</summary>
    public static long Now => DateTimeOffset.UtcNow.ToUnixTimeSeconds();

    /// <summary>Signs <paramref name="claims"/> (which carry <c>sub</c> and <c>nats</c>) as <paramref name="issuer"/>.</summary>
    public static string Encode(KeyPair issuer, JsonObject claims)
    {
        claims["iss"] = issuer.GetPublicKey();
        claims["iat"] ??= Now;
        claims["jti"] = Convert.ToHexString(RandomNumberGenerator.GetBytes(16));
        var signingInput = Header + "." + Base64Url.EncodeToString(Encoding.UTF8.GetBytes(claims.ToJsonString()));
        var signature = new byte[64];
        issuer.Sign(Encoding.ASCII.GetBytes(signingInput), signature);
        return signingInput + "." + Base64Url.EncodeToString(signature);
    }

    /// <summary>The raw URL-safe base64 signature of <paramref name="nonce"/> (its ASCII bytes) by <paramref name="key"/>, as clients send it in CONNECT.</summary>
    public static string SignNonce(KeyPair key, string nonce)
    {
        var signature = new byte[64];
        key.Sign(Encoding.ASCII.GetBytes(nonce), signature);
        return Base64Url.EncodeToString(signature);
    }

    /// <summary>A <c>.creds</c> file's text, as <c>nsc generate creds</c> writes it.</summary>
    public static string Creds(string userJwt, KeyPair user) => $"""
        -----BEGIN NATS USER JWT-----
        {userJwt}
        ------END NATS USER JWT------

        ************************* IMPORTANT *************************
        NKEY Seed printed below can be used to sign and prove identity.
        NKEYs are sensitive and should be treated as secrets.

        -----BEGIN USER NKEY SEED-----
        {user.GetSeed()}
        ------END USER NKEY SEED------

        *************************************************************

        """;
}

/// <summary>An account made by <see cref="TestOperator"/>: its key pair and JWT.</summary>
public sealed record TestAccount(KeyPair Key, string Jwt)
{
    public string PublicKey => Key.GetPublicKey();
}

/// <summary>A user made by <see cref="TestOperator"/>: its key pair and JWT.</summary>
public sealed record TestUser(KeyPair Key, string Jwt)
{
    public string PublicKey => Key.GetPublicKey();

    /// <summary>CONNECT JSON with the JWT and the signature of <paramref name="nonce"/>.</summary>
    public string Connect(string nonce) =>
        $$"""{"verbose":false,"pedantic":false,"headers":true,"jwt":"{{Jwt}}","sig":"{{TestJwt.SignNonce(Key, nonce)}}"}""";
}

/// <summary>
/// An operator with its system account, made fresh per test, and the config file text that trusts
/// it with a preloaded MEMORY resolver (the same text for nats-server and Courier).
/// </summary>
public sealed class TestOperator
{
    public TestOperator()
    {
        Key = KeyPair.CreatePair(PrefixByte.Operator);
        System = NewAccount("SYS");
        Jwt = TestJwt.Encode(Key, new JsonObject
        {
            ["sub"] = Key.GetPublicKey(),
            ["name"] = "TestOperator",
            ["nats"] = new JsonObject
            {
                ["system_account"] = System.PublicKey,
                ["type"] = "operator",
                ["version"] = 2,
            },
        });
    }

    public KeyPair Key { get; }

    /// <summary>The operator's self-signed JWT.</summary>
    public string Jwt { get; }

    public TestAccount System { get; }

    /// <summary>An account issued by the operator; <paramref name="nats"/> adds to its <c>nats</c> claims.</summary>
    public TestAccount NewAccount(string name, Action<JsonObject>? nats = null, long expires = 0) =>
        IssueAccount(KeyPair.CreatePair(PrefixByte.Account), name, nats, expires);

    /// <summary>A new JWT (a new <c>jti</c>) for <paramref name="account"/>'s key, as <c>nsc</c> writes after an edit.</summary>
    public TestAccount ReissueAccount(TestAccount account, string name, Action<JsonObject>? nats = null) =>
        IssueAccount(account.Key, name, nats, 0);

    private TestAccount IssueAccount(KeyPair key, string name, Action<JsonObject>? nats, long expires)
    {
        var claims = new JsonObject
        {
            // nsc's defaults: nats-server reads a missing limit as 0 (no connections, no subscriptions).
            ["limits"] = new JsonObject
            {
                ["subs"] = -1,
                ["data"] = -1,
                ["payload"] = -1,
                ["imports"] = -1,
                ["exports"] = -1,
                ["wildcards"] = true,
                ["conn"] = -1,
                ["leaf"] = -1,
            },
            ["type"] = "account",
            ["version"] = 2,
        };
        nats?.Invoke(claims);
        var jwt = new JsonObject { ["sub"] = key.GetPublicKey(), ["name"] = name, ["nats"] = claims };
        if (expires != 0)
        {
            jwt["exp"] = expires;
        }

        return new TestAccount(key, TestJwt.Encode(Key, jwt));
    }

    /// <summary>
    /// A user of <paramref name="account"/>, issued by the account or by <paramref name="signingKey"/>;
    /// <paramref name="nats"/> adds to its <c>nats</c> claims.
    /// </summary>
    public static TestUser NewUser(TestAccount account, Action<JsonObject>? nats = null, long expires = 0, long? issuedAt = null, KeyPair? signingKey = null)
    {
        var key = KeyPair.CreatePair(PrefixByte.User);
        var claims = UserNats();
        if (signingKey is not null)
        {
            claims["issuer_account"] = account.PublicKey;
        }

        nats?.Invoke(claims);
        var jwt = new JsonObject { ["sub"] = key.GetPublicKey(), ["name"] = "user", ["nats"] = claims };
        if (expires != 0)
        {
            jwt["exp"] = expires;
        }

        if (issuedAt is { } iat)
        {
            jwt["iat"] = iat;
        }

        return new TestUser(key, TestJwt.Encode(signingKey ?? account.Key, jwt));
    }

    /// <summary>A user's <c>nats</c> claims with nsc's default limits (unlimited subscriptions, data and payload).</summary>
    public static JsonObject UserNats() => new()
    {
        ["subs"] = -1,
        ["data"] = -1,
        ["payload"] = -1,
        ["type"] = "user",
        ["version"] = 2,
    };

    /// <summary>
    /// The config text of a directory resolver (<paramref name="type"/> <c>full</c> or <c>cache</c>) over
    /// <paramref name="dir"/>, where each account (the system account too) is written as <c>&lt;key&gt;.jwt</c>.
    /// </summary>
    public string DirectoryConfig(IEnumerable<TestAccount> accounts, string dir, string type = "full")
    {
        foreach (var account in accounts.Prepend(System))
        {
            File.WriteAllText(Path.Combine(dir, account.PublicKey + ".jwt"), account.Jwt);
        }

        return $$"""
            operator: "{{Jwt}}"
            system_account: {{System.PublicKey}}
            resolver: { type: {{type}}, dir: "{{dir}}" }
            """;
    }

    /// <summary>The config text: this operator (inline, or the file <paramref name="operatorFile"/>), its system account, a MEMORY resolver with these accounts preloaded.</summary>
    public string Config(IEnumerable<TestAccount> accounts, string? operatorFile = null)
    {
        var preload = new StringBuilder();
        foreach (var account in accounts.Prepend(System))
        {
            preload.Append("  ").Append(account.PublicKey).Append(": \"").Append(account.Jwt).Append("\"\n");
        }

        return $$"""
            operator: "{{operatorFile ?? Jwt}}"
            system_account: {{System.PublicKey}}
            resolver: MEMORY
            resolver_preload: {
            {{preload}}}
            """;
    }
}
