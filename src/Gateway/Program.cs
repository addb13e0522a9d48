using Courier.Actors.Server;
using Courier.Gateway;
using Courier.Gateway.Configuration;
using Courier.Gateway.Logging;
using Courier.Gateway.Signals;
using Microsoft.Extensions.Logging;

// Signals the server handles that it was started with ignored (a script's background job, nohup) are
// handled all the same, as nats-server's are; this must come before anything sets up signal handling.
UnixSignals.UnignoreHandled();

// Socket completions run on the socket engine's thread instead of hopping to the thread pool: the
// read pumps never block (they await), so this only removes a hop per read. It must be set before
// the first socket is created; an explicit setting in the environment wins.
const string InlineCompletions = "DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS";
if (Environment.GetEnvironmentVariable(InlineCompletions) is null)
{
    Environment.SetEnvironmentVariable(InlineCompletions, "1");
}

// The actor system's configuration work that needs no option (its HOCON parsed, Akka's app.config
// lookup, its duration parser) runs on a pool thread while this one reads the options and sets up
// logging; ActorSystem.Create then finds it done.
_ = Task.Run(Courier.Actors.Hosting.ActorSystemConfig.Prepare);

var configuration = ServerConfiguration.Load(args);
switch (configuration.Action)
{
    case CommandLineAction.ShowVersion:
        // nats-server's form; tools parse the first vX.Y.Z, which is the nats-server version implemented.
        Console.WriteLine($"nats-server: v{configuration.Options.NatsServerVersion} (courier v{Broker.CourierVersion})");
        return 0;
    case CommandLineAction.ShowHelp:
        Console.WriteLine(CommandLine.Usage);
        return 0;
    case CommandLineAction.SendSignal:
        if (SignalCommand.Run(configuration.Signal!) is { } signalError)
        {
            Console.Error.WriteLine($"courier: {signalError}");
            return 1;
        }

        return 0;
    case CommandLineAction.Error:
        Console.Error.WriteLine(configuration.Error);
        return 1;
}

var options = configuration.Options;
NatsLogSink sink;
try
{
    sink = new NatsLogSink(options.LogFile, options.Logtime, options.LogSizeLimit, NatsLogSink.LevelFor(options.Debug, options.Trace));
}
catch (Exception e) when (e is IOException or UnauthorizedAccessException)
{
    Console.Error.WriteLine($"error opening file: {e.Message}");
    return 1;
}

using var logSink = sink;
// Built directly, not through LoggerFactory.Create: that builds a dependency-injection container for
// the one provider (the largest item before the actor system in a traced start; measured untraced, the
// saving is under the 10 ms resolution of a start's CPU time).
using var loggerFactory = new LoggerFactory(
    [new NatsLoggerProvider(sink)],
    new LoggerFilterOptions { MinLevel = LogLevel.Trace }); // the sink filters, so a reload can change the level
var log = loggerFactory.CreateLogger("courier");
foreach (var warning in configuration.Warnings)
{
    log.LogWarning("{Warning}", warning);
}

// Disposed explicitly below, once: "Server Exiting.." is logged after everything has stopped.
var host = new ServerHost(options, loggerFactory);

// Signals are handled from before the ports file is written, as nats-server's Start does: a
// supervisor may signal as soon as it sees the server listening.
using var signals = new ProcessSignals(host, sink, log, args);
try
{
    await host.StartAsync();
}
catch (Exception e) when (e is System.Net.Sockets.SocketException or IOException)
{
    log.LogCritical("Error starting server: {Error}", e.Message);
    await host.DisposeAsync();
    return 1;
}
catch (Courier.Storage.StoreKeyException e)
{
    // nats-server's fatal "Can't start JetStream: ..." (a wrong or missing jetstream.key).
    log.LogCritical("Can't start JetStream: {Error}", e.Message);
    await host.DisposeAsync();
    return 1;
}

var exitCode = await signals.WaitForStopAsync();
log.LogInformation("Initiating Shutdown...");
await host.DisposeAsync();
log.LogInformation("Server Exiting..");
return exitCode;
