# Courier: build with the .NET SDK, run on the ASP.NET runtime (monitoring uses Kestrel).
FROM mcr.microsoft.com/dotnet/sdk:10.0 AS build
WORKDIR /src
COPY . .
RUN dotnet publish src/Gateway/Courier.Gateway.csproj -c Release -o /app

FROM mcr.microsoft.com/dotnet/aspnet:10.0
WORKDIR /app
COPY --from=build /app .
# Client port, monitoring port.
EXPOSE 4222 8222
VOLUME /data
ENTRYPOINT ["dotnet", "courier.dll"]
CMD ["-p", "4222", "-m", "8222", "-js", "-sd", "/data"]
