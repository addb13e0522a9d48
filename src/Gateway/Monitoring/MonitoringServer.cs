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
using Prometheus;

namespace Courier.Gateway.Monitoring;

/// <summary>
/// HTTP monitoring (<c>-m</c> / <c>http_port</c>): /healthz, /varz, /connz, /subsz with nats-server's
/// JSON field names, served by Kestrel from the shared framework, and /metrics in Prometheus' text
/// format (<see cref="PrometheusMetrics"/>). With <c>https_port</c> the same pages
/// are served over TLS with the client listener's <c>tls { }</c> block (its certificate, and with
/// <c>verify</c> its client-certificate check), as nats-server does.
/// </summary>
internal sealed class MonitoringServer : IAsyncDisposable
{
    private readonly Broker _broker;
    private readonly WebApplication _app;
    private readonly MonitoringPages _pages;
    private readonly PrometheusMetrics _metrics;
    private readonly ILogger _log;

    private static readonly HashSet<string> CountedPaths = new(StringComparer.Ordinal)
    {
        "/", "/varz", "/connz", "/routez", "/subsz", "/gatewayz", "/leafz", "/accstatz", "/accountz", "/jsz", "/healthz",
    };

    public MonitoringServer(Broker broker, MonitoringPages pages, string host, int port, ILoggerFactory loggerFactory, TlsTransport? tls = null)
    {
        _broker = broker;
        _pages = pages;
        _log = loggerFactory.CreateLogger("courier");
        _metrics = new PrometheusMetrics(broker, pages);
        pages.Https = tls is not null;
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

        // /varz http_req_stats: the pages nats-server 2.9.10 counts, each request before it is answered.
        _app.Use((http, next) =>
        {
            if (http.Request.Path.Value is { } path && CountedPaths.Contains(path))
            {
                _pages.CountRequest(path);
            }

            return next(http);
        });
        _app.MapGet("/", () => Results.Text("Courier monitoring: /varz /connz /routez /leafz /gatewayz /subsz /accountz /accstatz /jsz /raftz /healthz /metrics\n"));
        _app.MapGet("/healthz", (Func<HttpContext, Task<IResult>>)Healthz);
        _app.MapGet("/varz", (HttpContext _) => Json(_pages.Varz(), GatewayJsonContext.Default.Varz));
        _app.MapGet("/connz", (HttpContext http) => Connz(http.Request.Query));
        _app.MapGet("/accountz", (HttpContext http) => Accountz(http.Request.Query["acc"].ToString()));
        _app.MapGet("/routez", (HttpContext _) => Json(_pages.Routez(), GatewayJsonContext.Default.Routez));
        _app.MapGet("/leafz", (HttpContext http) => Leafz(http.Request.Query));
        _app.MapGet("/gatewayz", (HttpContext http) => Gatewayz(http.Request.Query));
        _app.MapGet("/accstatz", (HttpContext http) => Accstatz(http.Request.Query));
        _app.MapGet("/subsz", (HttpContext http) => Subsz(http.Request.Query));
        _app.MapGet("/jsz", (Func<HttpContext, Task<IResult>>)(http => JszAsync(http.Request.Query)));
        _app.MapGet("/raftz", (Func<HttpContext, Task<IResult>>)(async http => Json(await _pages.RaftzAsync(http.Request.Query["acc"].ToString(), http.Request.Query["group"].ToString()).ConfigureAwait(false), GatewayJsonContext.Default.Raftz)));
        // Prometheus' text format 0.0.4 even when the scraper offers OpenMetrics: in OpenMetrics
        // prometheus-net would name the counters' samples *_total, not as the exporter does.
        _app.MapMetrics(settings =>
        {
            settings.Registry = _metrics.Registry;
            settings.EnableOpenMetrics = false;
        }, "/metrics");
    }

    /// <summary>Where it listens, known after <see cref="StartAsync"/>.</summary>
    public IPEndPoint? LocalEndPoint { get; private set; }

    public async Task StartAsync()
    {
        await _app.StartAsync().ConfigureAwait(false);
        var addresses = _app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses;
        var uri = new Uri(addresses.First().Replace("[::]", "0.0.0.0", StringComparison.Ordinal));
        LocalEndPoint = new IPEndPoint(IPAddress.TryParse(uri.Host, out var ip) ? ip : IPAddress.Any, uri.Port);
        _pages.HttpListenPort = uri.Port;
    }

    public async ValueTask DisposeAsync()
    {
        await _app.StopAsync().ConfigureAwait(false);
        await _app.DisposeAsync().ConfigureAwait(false);
        _metrics.Dispose();
    }

    /// <summary>
    /// /healthz as nats-server 2.10.22's HandleHealthz: <c>js-enabled</c> (deprecated), <c>js-enabled-only</c>,
    /// <c>js-server-only</c> and <c>details</c> are Go booleans, read in that order (a value Go cannot parse is a
    /// 400 with Go's message); <c>account</c>, <c>stream</c> and <c>consumer</c> name the assets to check
    /// (<see cref="MonitoringPages.HealthzAsync"/>). The answer's status code is the HTTP status, not in the body.
    /// </summary>
    private async Task<IResult> Healthz(HttpContext http)
    {
        var query = http.Request.Query;
        if (!TryGoBool(query, "js-enabled", out var jsEnabled, out var error)
            || !TryGoBool(query, "js-enabled-only", out var jsEnabledOnly, out error)
            || !TryGoBool(query, "js-server-only", out var jsServerOnly, out error)
            || !TryGoBool(query, "details", out var details, out error))
        {
            return BadRequest(error);
        }

        if (jsEnabled)
        {
            _log.LogWarning("Healthcheck: js-enabled deprecated, use js-enabled-only instead");
        }

        var health = await _pages.HealthzAsync(new HealthzQuery(
            jsEnabledOnly || jsEnabled, jsServerOnly, FirstValue(query, "account"), FirstValue(query, "stream"), FirstValue(query, "consumer"), details)).ConfigureAwait(false);
        var status = health.StatusCode;
        if (health.Error is { } failure)
        {
            _log.LogWarning("Healthcheck failed: \"{Error}\"", failure);
        }

        health.StatusCode = 0;
        return CompactJson(health, status);
    }

    // nats-server writes /healthz with json.Marshal, on one line, where the other pages are indented.
    private static IResult CompactJson(Healthz value, int status)
    {
        var buffer = new System.Buffers.ArrayBufferWriter<byte>();
        using (var writer = new Utf8JsonWriter(buffer))
        {
            JsonSerializer.Serialize(writer, value, GatewayJsonContext.Default.Healthz);
        }

        return Results.Text(System.Text.Encoding.UTF8.GetString(buffer.WrittenSpan), "application/json", System.Text.Encoding.UTF8, status);
    }

    private static IResult Json<T>(T value, JsonTypeInfo<T> typeInfo, int status = StatusCodes.Status200OK) =>
        Results.Text(JsonSerializer.Serialize(value, typeInfo), "application/json", System.Text.Encoding.UTF8, status);

    /// <summary>/accountz (nats-server's Accountz): the names, or <c>?acc=</c> one account; an unknown one is a 400.</summary>
    private IResult Accountz(string name)
    {
        if (string.IsNullOrEmpty(name))
        {
            return Json(_pages.AccountList(), GatewayJsonContext.Default.Accountz);
        }

        if (_pages.AccountDetail(name) is not { } detail)
        {
            return Results.Text($"Account {name} does not exist", "text/plain", System.Text.Encoding.UTF8, StatusCodes.Status400BadRequest);
        }

        return Json(new Accountz { ServerId = _broker.ServerId, Now = DateTime.UtcNow, Account = detail }, GatewayJsonContext.Default.Accountz);
    }

    /// <summary>
    /// /jsz (nats-server's HandleJsz): <c>acc</c>, <c>accounts</c>, <c>streams</c>, <c>consumers</c>,
    /// <c>config</c>, <c>leader-only</c>, <c>offset</c>, <c>limit</c>; a value Go cannot parse is a 400
    /// with Go's message, and so is <c>leader-only</c> on a server that is not the leader.
    /// </summary>
    private async Task<IResult> JszAsync(IQueryCollection query)
    {
        if (!TryGoBool(query, "accounts", out var accounts, out var error)
            || !TryGoBool(query, "streams", out var streams, out error)
            || !TryGoBool(query, "consumers", out var consumers, out error)
            || !TryGoBool(query, "config", out var config, out error)
            || !TryGoInt(query, "offset", out var offset, out error)
            || !TryGoInt(query, "limit", out var limit, out error)
            || !TryGoBool(query, "leader-only", out var leaderOnly, out error))
        {
            return BadRequest(error);
        }

        var jsz = await _pages.JszAsync(new JszQuery(query["acc"].ToString(), accounts, streams, consumers, config, leaderOnly, offset, limit)).ConfigureAwait(false);
        return jsz is null ? BadRequest("filtered response: not leader") : Json(jsz, GatewayJsonContext.Default.Jsz);
    }

    private static IResult BadRequest(string text) => Results.Text(text, "text/plain", System.Text.Encoding.UTF8, StatusCodes.Status400BadRequest);

    // Go's url.Values.Get: the first of a repeated parameter, not all of them joined with commas.
    private static string FirstValue(IQueryCollection query, string name) =>
        query[name] is { Count: > 0 } values ? values[0] ?? "" : "";

    // Go's strconv.ParseBool, as nats-server's decodeBool: absent or empty is false.
    private static bool TryGoBool(IQueryCollection query, string name, out bool value, out string error)
    {
        var text = FirstValue(query, name);
        error = "";
        switch (text)
        {
            case "":
            case "0" or "f" or "F" or "false" or "FALSE" or "False":
                value = false;
                return true;
            case "1" or "t" or "T" or "true" or "TRUE" or "True":
                value = true;
                return true;
            default:
                value = false;
                error = $"Error decoding boolean for '{name}': strconv.ParseBool: parsing \"{text}\": invalid syntax";
                return false;
        }
    }

    // Go's strconv.Atoi, as nats-server's decodeInt: absent or empty is 0; Go's int has 64 bits, so
    // a value past int's range is clamped to it (a page of 2^31 entries is as good as unlimited).
    private static bool TryGoInt(IQueryCollection query, string name, out int value, out string error)
    {
        var text = FirstValue(query, name);
        value = 0;
        if (!TryGoInteger(text, signed: true, out var magnitude, out var negative, out var reason))
        {
            error = $"Error decoding int for '{name}': strconv.Atoi: parsing \"{text}\": {reason}";
            return false;
        }

        error = "";
        value = negative ? (int)Math.Max(-(decimal)magnitude, int.MinValue) : (int)Math.Min(magnitude, int.MaxValue);
        return true;
    }

    // Go's strconv.ParseUint(s, 10, 64), as nats-server's decodeUint64: absent or empty is 0.
    private static bool TryGoUint64(IQueryCollection query, string name, out ulong value, out string error)
    {
        var text = FirstValue(query, name);
        if (!TryGoInteger(text, signed: false, out value, out _, out var reason))
        {
            error = $"Error decoding uint64 for '{name}': strconv.ParseUint: parsing \"{text}\": {reason}";
            return false;
        }

        error = "";
        return true;
    }

    // Decimal digits (after one sign when signed) up to Go's int64 / uint64 range; the reason is Go's.
    private static bool TryGoInteger(string text, bool signed, out ulong magnitude, out bool negative, out string reason)
    {
        magnitude = 0;
        negative = false;
        reason = "invalid syntax";
        if (text.Length == 0)
        {
            return true;
        }

        var digits = text.AsSpan();
        if (signed && (digits[0] == '+' || digits[0] == '-'))
        {
            negative = digits[0] == '-';
            digits = digits[1..];
        }

        if (digits.Length == 0 || digits.ContainsAnyExceptInRange('0', '9'))
        {
            return false;
        }

        var limit = signed ? (negative ? 1UL << 63 : long.MaxValue) : ulong.MaxValue;
        if (!ulong.TryParse(digits, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out magnitude) || magnitude > limit)
        {
            magnitude = 0;
            reason = "value out of range";
            return false;
        }

        return true;
    }

    /// <summary>
    /// /connz as nats-server 2.9.10's HandleConnz: <c>auth</c>, <c>subs</c> (a Go boolean, or <c>detail</c>
    /// in any case), <c>offset</c>, <c>limit</c>, <c>cid</c> and <c>state</c> are decoded in that order and the
    /// first bad one is a 400 with nats-server's text; then <c>sort</c>, which may be refused too.
    /// </summary>
    private IResult Connz(IQueryCollection query)
    {
        var subsDetail = FirstValue(query, "subs").Equals("detail", StringComparison.OrdinalIgnoreCase);
        var subs = false;
        if (!TryGoBool(query, "auth", out var auth, out var error)
            || (!subsDetail && !TryGoBool(query, "subs", out subs, out error))
            || !TryGoInt(query, "offset", out var offset, out error)
            || !TryGoInt(query, "limit", out var limit, out error)
            || !TryGoUint64(query, "cid", out var cid, out error)
            || !TryConnzState(query, out var state, out error)
            || !ConnzQuery.TryParseSort(FirstValue(query, "sort"), out var sort, out error))
        {
            return BadRequest(error);
        }

        var connzQuery = new ConnzQuery(sort, subs, subsDetail, auth, offset, limit, cid, FirstValue(query, "mqtt_client"), state, FirstValue(query, "user"), FirstValue(query, "acc"));
        return connzQuery.Refusal() is { } refusal ? BadRequest(refusal) : Json(_pages.Connz(connzQuery), GatewayJsonContext.Default.Connz);
    }

    /// <summary>/leafz as nats-server 2.9.10's HandleLeafz: <c>subs</c> (a Go boolean), <c>acc</c>.</summary>
    private IResult Leafz(IQueryCollection query) =>
        TryGoBool(query, "subs", out var subs, out var error)
            ? Json(_pages.Leafz(subs, FirstValue(query, "acc")), GatewayJsonContext.Default.Leafz)
            : BadRequest(error);

    /// <summary>/gatewayz as nats-server 2.9.10's HandleGatewayz: <c>accs</c> (a Go boolean), <c>gw_name</c>, <c>acc_name</c> (makes <c>accs</c> implicit).</summary>
    private IResult Gatewayz(IQueryCollection query)
    {
        if (!TryGoBool(query, "accs", out var accounts, out var error))
        {
            return BadRequest(error);
        }

        var accountName = FirstValue(query, "acc_name");
        return Json(_pages.Gatewayz(new GatewayzQuery(FirstValue(query, "gw_name"), accounts || accountName.Length > 0, accountName)), GatewayJsonContext.Default.Gatewayz);
    }

    /// <summary>
    /// /accstatz as nats-server 2.9.10's HandleAccountStatz: every account with a local client connection,
    /// or with <c>unused</c> (a Go boolean) every account. It reads no other option (an <c>accounts</c>
    /// list is the system request's only, as in nats-server).
    /// </summary>
    private IResult Accstatz(IQueryCollection query) =>
        TryGoBool(query, "unused", out var unused, out var error)
            ? Json(_pages.AccountStatz(null, unused), GatewayJsonContext.Default.AccountStatz)
            : BadRequest(error);

    /// <summary>
    /// /subsz as nats-server 2.9.10's HandleSubsz: <c>subs</c>, <c>offset</c>, <c>limit</c> decoded in that
    /// order (a bad one is a 400), <c>test</c> must be a literal subject, and <c>acc</c> filters. With no
    /// subscription in the page only the counts are written, as nats-server does.
    /// </summary>
    private IResult Subsz(IQueryCollection query)
    {
        if (!TryGoBool(query, "subs", out var subs, out var error)
            || !TryGoInt(query, "offset", out var offset, out error)
            || !TryGoInt(query, "limit", out var limit, out error))
        {
            return BadRequest(error);
        }

        var subszQuery = new SubszQuery(subs, offset, limit, FirstValue(query, "acc"), FirstValue(query, "test"));
        if (subszQuery.Refusal() is { } refusal)
        {
            return BadRequest(refusal);
        }

        var subsz = _pages.Subsz(subszQuery);
        return subsz.Subscriptions is { Count: > 0 }
            ? Json(subsz, GatewayJsonContext.Default.Subsz)
            : Json(SublistStats.Of(subsz), GatewayJsonContext.Default.SublistStats);
    }

    // nats-server's decodeState: open, closed, any or all in any case; absent or empty is open.
    private static bool TryConnzState(IQueryCollection query, out ConnzState state, out string error)
    {
        var text = FirstValue(query, "state");
        error = "";
        state = text.ToLowerInvariant() switch
        {
            "" or "open" => ConnzState.Open,
            "closed" => ConnzState.Closed,
            "any" or "all" => ConnzState.Any,
            _ => (ConnzState)(-1),
        };
        if (state >= 0)
        {
            return true;
        }

        error = $"Error decoding state for {text}";
        return false;
    }
}
