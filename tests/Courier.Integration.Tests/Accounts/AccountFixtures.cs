using Courier.Integration.Tests.Infrastructure;
using NATS.Client.Core;

namespace Courier.Integration.Tests.Accounts;

/// <summary>The accounts the shared servers run: A exports, B and C import, G is a plain user of $G.</summary>
internal static class AccountConfig
{
    public const string Shared = """
        accounts {
          A: {
            users: [ {user: a, password: a}, {user: a2, password: a2} ]
            exports: [
              {stream: "feed.>"}
              {stream: "private.>", accounts: [B]}
              {service: "svc.echo"}
              {service: "svc.many", response_type: stream}
              {service: "svc.only_b", accounts: [B]}
            ]
          }
          B: {
            users: [ {user: b, password: b} ]
            imports: [
              {stream: {account: A, subject: "feed.>"}, prefix: "from_a"}
              {stream: {account: A, subject: "private.>"}}
              {service: {account: A, subject: "svc.echo"}, to: "echo"}
              {service: {account: A, subject: "svc.many"}}
              {service: {account: A, subject: "svc.only_b"}}
            ]
          }
          C: {
            users: [ {user: c, password: c} ]
            imports: [
              {stream: {account: A, subject: "feed.mapped"}, to: "mapped.here"}
            ]
          }
        }
        authorization {
          users: [ {user: g, password: g} ]
        }
        """;

    /// <summary>Connects NATS.Net as <paramref name="user"/> (password = user name).</summary>
    public static async Task<NatsConnection> ConnectAsync(ServerFixture server, string user) =>
        await ConnectAsync(server.Url, user);

    public static async Task<NatsConnection> ConnectAsync(string url, string? user)
    {
        var nats = new NatsConnection(new NatsOpts
        {
            Url = url,
            Name = "accounts-it",
            AuthOpts = user is null ? NatsAuthOpts.Default : new NatsAuthOpts { Username = user, Password = user },
            RequestTimeout = TimeSpan.FromSeconds(10),
            CommandTimeout = TimeSpan.FromSeconds(10),
            MaxReconnectRetry = 0,
        });
        await nats.ConnectAsync();
        return nats;
    }
}

/// <summary>Courier with <see cref="AccountConfig.Shared"/>.</summary>
public sealed class CourierAccountsFixture : ServerFixture
{
    public CourierAccountsFixture()
        : base(ServerKind.Courier)
    {
    }

    protected override string? ConfigText => AccountConfig.Shared;
}

/// <summary>nats-server 2.9.10 with <see cref="AccountConfig.Shared"/>.</summary>
public sealed class NatsServerAccountsFixture : ServerFixture
{
    public NatsServerAccountsFixture()
        : base(ServerKind.NatsServer)
    {
    }

    protected override string? ConfigText => AccountConfig.Shared;
}
