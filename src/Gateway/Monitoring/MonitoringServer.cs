using System.Diagnostics;
using System.Net;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using Courier.Actors.Connections;
using Courier.Actors.Server;
using Courier.Gateway.Listeners;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Server.Kestrel.Https;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Courier.Gateway.Monitoring;

/// <summary>
/// HTTP monitoring (<c>-m</c> / <c>http_port</c>): /healthz, /varz, /connz, /subsz with nats-server's
/// JSON field names, served by Kestrel from the shared framework. With <c>https_port</c> the same pages
/// are served over TLS with the client listener's <c>tls { }</c> block (its certificate, and with
/// <c>verify</c> its client-certificate check), as nats-server does.
/// </summary>
internal sealed class MonitoringServer : IAsyncDisposable
{
    /// <summary>/connz page size when none is asked for (nats-server DefaultConnListSize).</summary>
    private const int DefaultConnzLimit = 1024;

    private readonly Broker _broker;
    private readonly WebApplication _app;
    private readonly DateTime _configLoadTime = DateTime.UtcNow;
    private readonly bool _https;

    public MonitoringServer(Broker broker, string host, int port, ILoggerFactory loggerFactory, TlsTransport? tls = null)
    {
        _broker = broker;
        _https = tls is not null;
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.Services.AddSingleton(loggerFactory);
        var address = ListenAddress.Resolve(host);
        builder.WebHost.ConfigureKestrel(k => k.Listen(address, port < 0 ? 0 : port, listen =>
        {
            if (tls is not null)
            {
                listen.UseHttps(new TlsHandshakeCallbackOptions
                {
                    OnConnection = _ => ValueTask.FromResult(tls.CreateAuthenticationOptions()),
                    HandshakeTimeout = tls.Options.Timeout,
                });
            }
        }));
        _app = builder.Build();
        _app.MapGet("/", () => Results.Text("Courier monitoring: /varz /connz /routez /subsz /accountz /jsz /healthz\n"));
        _app.MapGet("/healthz", Healthz);
        _app.MapGet("/varz", (HttpContext _) => Json(BuildVarz(), GatewayJsonContext.Default.Varz));
        _app.MapGet("/connz", (HttpContext http) => Json(BuildConnz(http.Request.Query), GatewayJsonContext.Default.Connz));
        _app.MapGet("/accountz", (HttpContext http) => Accountz(http.Request.Query["acc"].ToString()));
        _app.MapGet("/routez", (HttpContext _) => Json(BuildRoutez(), GatewayJsonContext.Default.Routez));
        _app.MapGet("/subsz", (HttpContext _) => Json(BuildSubsz(), GatewayJsonContext.Default.Subsz));
        _app.MapGet("/jsz", async () => Json(await BuildJszAsync().ConfigureAwait(false), GatewayJsonContext.Default.Jsz));
    }

    /// <summary>Where it listens, known after <see cref="StartAsync"/>.</summary>
    public IPEndPoint? LocalEndPoint { get; private set; }

    public async Task StartAsync()
    {
        await _app.StartAsync().ConfigureAwait(false);
        var addresses = _app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses;
        var uri = new Uri(addresses.First().Replace("[::]", "0.0.0.0", StringComparison.Ordinal));
        LocalEndPoint = new IPEndPoint(IPAddress.TryParse(uri.Host, out var ip) ? ip : IPAddress.Any, uri.Port);
    }

    public async ValueTask DisposeAsync()
    {
        await _app.StopAsync().ConfigureAwait(false);
        await _app.DisposeAsync().ConfigureAwait(false);
    }

    private IResult Healthz(HttpContext http)
    {
        var jsOnly = http.Request.Query["js-enabled-only"] == "true" || http.Request.Query["js-enabled"] == "true";
        if (jsOnly && !_broker.Options.JetStream)
        {
            return Json(new Healthz { Status = "unavailable", Error = "JetStream not enabled" }, GatewayJsonContext.Default.Healthz, StatusCodes.Status503ServiceUnavailable);
        }

        if (_broker.Routes is not null && _broker.ClusterPeersExpected && !_broker.IsClusterMember)
        {
            // A clustered node that routes reach but that is not (or no longer) an Up member of the Akka cluster.
            return Json(new Healthz { Status = "unavailable", Error = "not a member of the cluster" }, GatewayJsonContext.Default.Healthz, StatusCodes.Status503ServiceUnavailable);
        }

        return Json(new Healthz(), GatewayJsonContext.Default.Healthz);
    }

    private Routez BuildRoutez()
    {
        var now = DateTime.UtcNow;
        var routes = _broker.GetRoutes();
        return new Routez
        {
            ServerId = _broker.ServerId,
            ServerName = _broker.ServerName,
            Now = now,
            NumRoutes = routes.Count,
            Routes = [.. routes.Select(r => new RoutezRoute
            {
                Rid = r.Rid,
                RemoteId = r.RemoteId,
                RemoteName = r.RemoteName,
                DidSolicit = r.DidSolicit,
                IsConfigured = r.IsConfigured,
                Ip = r.Ip,
                Port = r.Port,
                Start = r.Start,
                LastActivity = r.LastActivity,
                Uptime = GoDurationText(now - r.Start),
                Idle = GoDurationText(now - r.LastActivity),
                Pending = r.PendingBytes,
                InMsgs = r.InMsgs,
                OutMsgs = r.OutMsgs,
                InBytes = r.InBytes,
                OutBytes = r.OutBytes,
                Subscriptions = r.Subscriptions,
            })],
        };
    }

    private Varz BuildVarz()
    {
        var o = _broker.Options;
        var now = DateTime.UtcNow;
        var totals = _broker.GetTotals();
        using var process = Process.GetCurrentProcess();
        return new Varz
        {
            ServerId = _broker.ServerId,
            ServerName = _broker.ServerName,
            Version = o.NatsServerVersion,
            CourierVersion = Broker.CourierVersion,
            Proto = 1,
            Go = "courier " + Broker.CourierVersion,
            Host = o.Host,
            Port = _broker.ListenPort,
            AuthRequired = o.AuthRequired,
            MaxConnections = o.MaxConnections,
            MaxSubscriptions = o.MaxSubscriptions,
            PingInterval = o.PingInterval.Ticks * 100, // nanoseconds, as Go's time.Duration
            PingMax = o.MaxPingsOut,
            HttpHost = o.HttpHost ?? o.Host,
            HttpPort = _https ? 0 : LocalEndPoint?.Port ?? o.HttpPort,
            HttpsPort = o.HttpsPort, // as configured (-1 stays -1), as nats-server reports it
            TlsRequired = o.Tls is not null,
            TlsVerify = o.Tls is { Verify: true },
            TlsTimeout = (o.Tls?.Timeout ?? TlsOptions.DefaultTimeout).TotalSeconds,
            AuthTimeout = o.AuthTimeout.TotalSeconds,
            MaxControlLine = o.MaxControlLine,
            MaxPayload = o.MaxPayload,
            MaxPending = o.MaxPending,
            WriteDeadline = o.WriteDeadline.Ticks * 100,
            Cluster = _broker.Routes is { } table
                ? new VarzCluster
                {
                    Name = table.ClusterName,
                    Host = o.Cluster.Host,
                    Port = _broker.RoutePort,
                    AuthTimeout = o.Cluster.AuthTimeout.TotalSeconds,
                    Urls = o.Cluster.Routes.Count == 0 ? null : [.. o.Cluster.Routes.Select(u => $"{u.Host}:{u.Port}")],
                }
                : new VarzCluster(),
            ConnectUrls = _broker.Routes is null || o.Cluster.NoAdvertise ? null : _broker.ConnectUrls,
            Routes = _broker.Routes?.Routes.Length ?? 0,
            JetStream = o.JetStream
                ? new VarzJetStream { Config = VarzJetStreamConfig.From(o, o.StoreDir ?? "") }
                : null,
            Start = _broker.Started,
            Now = now,
            Uptime = GoDurationText(now - _broker.Started),
            Mem = process.WorkingSet64,
            Cores = Environment.ProcessorCount,
            MaxProcs = Environment.ProcessorCount,
            Connections = _broker.ConnectionCount,
            TotalConnections = _broker.Stats.TotalConnections,
            InMsgs = totals.InMsgs,
            OutMsgs = totals.OutMsgs,
            InBytes = totals.InBytes,
            OutBytes = totals.OutBytes,
            SlowConsumers = _broker.Stats.SlowConsumers,
            Subscriptions = _broker.SubscriptionCount,
            ConfigLoadTime = _configLoadTime,
        };
    }

    /// <summary>/accountz (nats-server's Accountz): the names, or <c>?acc=</c> one account; an unknown one is a 400.</summary>
    private IResult Accountz(string name)
    {
        var now = DateTime.UtcNow;
        if (string.IsNullOrEmpty(name))
        {
            return Json(new Accountz { ServerId = _broker.ServerId, Now = now, Accounts = _broker.GetAccountNames() }, GatewayJsonContext.Default.Accountz);
        }

        if (_broker.GetAccount(name) is not { } account)
        {
            return Results.Text($"Account {name} does not exist", "text/plain", System.Text.Encoding.UTF8, StatusCodes.Status400BadRequest);
        }

        var detail = new AccountzDetail
        {
            Name = account.Name,
            JetStream = account.JetStream,
            ClientConnections = account.ClientConnections,
            Subscriptions = account.Subscriptions,
            Exports = [.. account.Exports.Select(e => new AccountzExport
            {
                Subject = e.Subject,
                Type = e.IsService ? "service" : "stream",
                ResponseType = e.IsService ? e.ResponseType switch { ServiceResponseType.Streamed => "Streamed", ServiceResponseType.Chunked => "Chunked", _ => "Singleton" } : null,
                ApprovedAccounts = e.Accounts is { Count: > 0 } approved ? approved : null,
            })],
            Imports = [.. account.Imports.Select(i => new AccountzImport
            {
                // A service import as nats-server shows it: the local subject, and "to" the exporter's.
                Subject = i.IsService ? i.To ?? i.Subject : i.Subject,
                Account = i.Account,
                To = i.IsService ? i.Subject : null,
                LocalSubject = i.IsService ? null : i.Prefix is { } prefix ? $"{prefix.TrimEnd('.')}.{i.Subject}" : i.To ?? i.Subject,
                Type = i.IsService ? "service" : "stream",
            })],
        };
        return Json(new Accountz { ServerId = _broker.ServerId, Now = now, Account = detail }, GatewayJsonContext.Default.Accountz);
    }

    private Connz BuildConnz(IQueryCollection query)
    {
        var now = DateTime.UtcNow;
        var withSubs = query["subs"] is var s && (s == "1" || s == "true" || s == "detail");
        var withAuth = query["auth"] is var a && (a == "1" || a == "true");
        var offset = int.TryParse(query["offset"], out var o) && o > 0 ? o : 0;
        var limit = int.TryParse(query["limit"], out var l) && l > 0 ? l : DefaultConnzLimit;
        // As nats-server 2.9.10: ?acc= filters with or without auth, ?user= only with auth=true.
        var user = withAuth ? query["user"].ToString() : "";
        var account = query["acc"].ToString();

        var all = _broker.GetConnections(closed: query["state"] == "closed");
        if (user.Length > 0 || account.Length > 0)
        {
            // Only that account's (and that user's) connections: nothing of another account shows.
            all = [.. all.Where(c => (account.Length == 0 || c.Account == account) && (user.Length == 0 || c.AuthorizedUser == user))];
        }

        var page = new List<ConnzConnection>();
        for (var i = offset; i < all.Count && page.Count < limit; i++)
        {
            var c = all[i];
            page.Add(new ConnzConnection
            {
                Cid = c.Cid,
                Type = c.Type,
                Ip = c.Ip,
                Port = c.Port,
                Start = c.Start,
                LastActivity = c.LastActivity,
                Uptime = GoDurationText(now - c.Start),
                Idle = GoDurationText(now - c.LastActivity),
                PendingBytes = c.PendingBytes,
                InMsgs = c.InMsgs,
                OutMsgs = c.OutMsgs,
                InBytes = c.InBytes,
                OutBytes = c.OutBytes,
                Subscriptions = c.Subscriptions.Count,
                Name = c.Name,
                Lang = c.Lang,
                Version = c.Version,
                AuthorizedUser = withAuth ? c.AuthorizedUser : null,
                Account = withAuth && c.Account != "$G" ? c.Account : null,
                TlsVersion = c.TlsVersion,
                TlsCipherSuite = c.TlsCipherSuite,
                SubscriptionsList = withSubs ? c.Subscriptions : null,
                Stop = c.Stop,
                Reason = c.Reason,
                MqttClient = c.MqttClient,
            });
        }

        return new Connz
        {
            ServerId = _broker.ServerId,
            Now = now,
            NumConnections = page.Count,
            Total = all.Count,
            Offset = offset,
            Limit = limit,
            Connections = page,
        };
    }

    private async Task<Jsz> BuildJszAsync()
    {
        var stats = await _broker.GetJetStreamStatsAsync().ConfigureAwait(false);
        if (stats is null)
        {
            return new Jsz { ServerId = _broker.ServerId, Now = DateTime.UtcNow, Disabled = true };
        }

        var o = _broker.Options;
        return new Jsz
        {
            ServerId = _broker.ServerId,
            Now = DateTime.UtcNow,
            Config = VarzJetStreamConfig.From(o, stats.StoreDirectory),
            Memory = stats.Memory,
            Storage = stats.Storage,
            ReservedMemory = stats.ReservedMemory,
            ReservedStorage = stats.ReservedStorage,
            Streams = stats.Streams,
            Consumers = stats.Consumers,
            Messages = stats.Messages,
            Bytes = stats.Bytes,
            Api = new JszApi { Total = stats.ApiTotal, Errors = stats.ApiErrors },
        };
    }

    private Subsz BuildSubsz() => new()
    {
        ServerId = _broker.ServerId,
        Now = DateTime.UtcNow,
        NumSubscriptions = _broker.SubscriptionCount,
    };

    private static IResult Json<T>(T value, JsonTypeInfo<T> typeInfo, int status = StatusCodes.Status200OK) =>
        Results.Text(JsonSerializer.Serialize(value, typeInfo), "application/json", System.Text.Encoding.UTF8, status);

    /// <summary>A duration the way nats-server prints uptime: <c>1d2h3m4s</c>, largest units first.</summary>
    internal static string GoDurationText(TimeSpan d)
    {
        if (d < TimeSpan.Zero)
        {
            d = TimeSpan.Zero;
        }

        var text = "";
        if (d.Days > 0)
        {
            text += $"{d.Days}d";
        }

        if (d.Hours > 0 || text.Length > 0)
        {
            text += $"{d.Hours}h";
        }

        if (d.Minutes > 0 || text.Length > 0)
        {
            text += $"{d.Minutes}m";
        }

        return text + $"{d.Seconds}s";
    }
}
