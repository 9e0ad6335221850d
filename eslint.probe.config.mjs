import tseslint from '/tmp/lintprobe/node_modules/typescript-eslint/dist/index.js';
export default tseslint.config(
  ...tseslint.configs.recommendedTypeChecked,
  { languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } } },
);
